// C ABI around one CUTLASS 3.x SM90 GEMM kernel (cutlass::gemm::device::GemmUniversalAdapter over
// cutlass::gemm::collective::CollectiveBuilder: TMA + wgmma, warp-specialized / ping-pong /
// cooperative schedules, default or stream-K tile scheduler; sm_90a) that runs a 1x1, stride-1,
// pad-0, dilation-1 conv2d fprop, with exactly the signature of the conv runners (pk_runtime.h,
// pk_runtime_sm90.h), so the collector (ctypes) calls it alike:
//
//   int64_t pk_info_<name>(int what)   0: sizeof(SharedStorage)  1: threads per block
//                                      2: mainloop stages        3: CTAs per cluster
//   int pk_run_<name>(...)             mode 0: can_implement + workspace query only (no device work,
//                                      pointers may be null); 1: one launch; 2: timed batches;
//                                      3: timed graph replays (pk_runtime.h).
//
// The conv as a "TN" GEMM: A = activations NHWC as an (N*H*W) x C row-major matrix, B = filter KRSC
// (R = S = 1) as a K x C matrix, i.e. the GEMM's C x K column-major B, D = output NPQK as an
// (N*H*W) x K row-major matrix; M = N*H*W, N = K, K = C; D = alpha * A B + beta * C (fp32
// alpha/beta).  A kernel with a column-major D (KernelConfig.swap_ab) runs the transposed GEMM: A = the
// filter (K x C row-major), B = the activations, D = the output as a K x (N*H*W) column-major matrix;
// M = K, N = N*H*W.  Any other filter, stride, padding or dilation, P != H or Q != W, and serial split-k
// are PK_CANNOT_IMPLEMENT.
//
// Workspace: the stream-K scheduler counts its tile locks up during a launch, so every launch of a
// kernel that needs a workspace starts by zeroing it (cudaMemsetAsync on the launch's stream, inside
// the timed region: what re-running such a GEMM costs).  The persistent kernels are sized for the
// SM count of the current device (1 where no device answers: host-only queries).
#pragma once

#include "pk_runtime.h"  // PkProblem, PkStatus, launch()

#include "cutlass/kernel_hardware_info.hpp"
#include "cute/tensor.hpp"
#include "cutlass/gemm/gemm.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/util/packed_stride.hpp"

namespace pk {

// op.run(stream) after zeroing the workspace (see the header comment); launch() calls run(stream).
template <typename Op>
struct ZeroedWorkspaceRun {
  Op& op;
  void* workspace;
  size_t bytes;
  cutlass::Status run(cudaStream_t stream) {
    if (bytes > 0 && cudaMemsetAsync(workspace, 0, bytes, stream) != cudaSuccess) {
      return cutlass::Status::kErrorInternal;
    }
    return op.run(stream);
  }
};

template <typename Kernel>
struct RunnerGemm3x {
  using Op = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using ElementA = typename Kernel::ElementA;
  using ElementB = typename Kernel::ElementB;
  using ElementC = typename Kernel::ElementC;
  using ElementD = typename Kernel::ElementD;
  using StrideA = typename Kernel::StrideA;
  using StrideB = typename Kernel::StrideB;
  using StrideC = typename Kernel::StrideC;
  using StrideD = typename Kernel::StrideD;
  // A column-major D (unit stride along M) marks the transposed kernel (KernelConfig.swap_ab): it computes
  // D^T = filter x activations^T, whose column-major D is the conv's NPQK output.
  static constexpr bool kSwapAB = cute::is_constant<1, decltype(cute::get<0>(StrideD{}))>::value;

  static int64_t info(int what) {
    switch (what) {
      case 0: return static_cast<int64_t>(Kernel::SharedStorageSize);
      case 1: return static_cast<int64_t>(Kernel::MaxThreadsPerBlock);
      case 2: return static_cast<int64_t>(Op::kStages);
      case 3: return static_cast<int64_t>(cute::size(typename Kernel::DispatchPolicy::ClusterShape{}));
      default: return -1;
    }
  }

  // Whether the conv is exactly the GEMM (and its extents fit the kernel's int problem shape).
  static bool is_gemm(const PkProblem* pr) {
    if (pr->r != 1 || pr->s != 1 || pr->stride_h != 1 || pr->stride_w != 1 || pr->pad_h != 0 ||
        pr->pad_w != 0 || pr->dil_h != 1 || pr->dil_w != 1 || pr->p != pr->h || pr->q != pr->w) {
      return false;
    }
    const int64_t m = pr->n * pr->h * pr->w;
    return pr->n > 0 && pr->h > 0 && pr->w > 0 && pr->c > 0 && pr->k > 0 && m <= INT32_MAX &&
           pr->c <= INT32_MAX && pr->k <= INT32_MAX;
  }

  // The current device and its SM count (device 0 and 1 SM where no device answers).
  static cutlass::KernelHardwareInfo hardware() {
    cutlass::KernelHardwareInfo hw;
    int device = 0, count = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      cudaGetLastError();  // a host-only query: clear the error
      device = 0;
      count = 1;
    }
    hw.device_id = device;
    hw.sm_count = count;
    return hw;
  }

  static int run(const PkProblem* pr, void* A, void* B, void* C, void* D, float alpha, float beta,
                 void* workspace, size_t workspace_bytes, void* stream_ptr, int mode, int iters,
                 int reps, float* times_ms, size_t* ws_needed) {
    if (ws_needed) *ws_needed = 0;
    // A kernel without a source tensor (KernelConfig.no_source: ElementC void) computes alpha * conv only.
    if (cute::is_void_v<ElementC> && beta != 0.0f) return PK_CANNOT_IMPLEMENT;
    if (pr->split_k_slices != 1 || !is_gemm(pr)) return PK_CANNOT_IMPLEMENT;
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    // kSwapAB: the GEMM's M is the conv's K and its N the conv's N*H*W (filter as A, activations as B)
    const int M = int(kSwapAB ? pr->k : pr->n * pr->h * pr->w), N = int(kSwapAB ? pr->n * pr->h * pr->w : pr->k),
              K = int(pr->c);
    typename Op::Arguments args{};
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {M, N, K, 1};
    args.mainloop.ptr_A = static_cast<ElementA const*>(kSwapAB ? B : A);
    args.mainloop.dA = cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(M, K, 1));
    args.mainloop.ptr_B = static_cast<ElementB const*>(kSwapAB ? A : B);
    args.mainloop.dB = cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(N, K, 1));
    args.epilogue.thread.alpha = alpha;
    args.epilogue.thread.beta = beta;
    args.epilogue.ptr_C = static_cast<ElementC const*>(C);
    args.epilogue.dC = cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(M, N, 1));
    args.epilogue.ptr_D = static_cast<ElementD*>(D);
    args.epilogue.dD = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(M, N, 1));
    args.hw_info = hardware();
    size_t need = Op::get_workspace_size(args);
    if (ws_needed) *ws_needed = need;
    if (Op::can_implement(args) != cutlass::Status::kSuccess) return PK_CANNOT_IMPLEMENT;
    if (mode == 0) return PK_OK;
    if (need > workspace_bytes) return PK_WORKSPACE_TOO_SMALL;
    Op op;  // initialize() builds the TMA descriptors (host side, needs the device pointers)
    if (op.initialize(args, workspace, stream) != cutlass::Status::kSuccess) return PK_INIT_ERROR;
    if (cudaGetLastError() != cudaSuccess) return PK_INIT_ERROR;
    ZeroedWorkspaceRun<Op> runner{op, workspace, need};
    return launch(runner, stream, mode, iters, reps, times_ms);
  }
};

}  // namespace pk

#define PK_EXPORT_KERNEL_GEMM3X(NAME, KERNEL)                                                    \
  extern "C" int64_t pk_info_##NAME(int what) { return pk::RunnerGemm3x<KERNEL>::info(what); }   \
  extern "C" int pk_run_##NAME(const PkProblem* pr, void* A, void* B, void* C, void* D,           \
                               float alpha, float beta, void* ws, size_t ws_bytes, void* stream, \
                               int mode, int iters, int reps, float* times_ms,                   \
                               size_t* ws_needed) {                                              \
    return pk::RunnerGemm3x<KERNEL>::run(pr, A, B, C, D, alpha, beta, ws, ws_bytes, stream, mode, \
                                         iters, reps, times_ms, ws_needed);                      \
  }
