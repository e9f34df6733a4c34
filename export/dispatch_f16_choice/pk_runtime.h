// Small C ABI around one CUTLASS 2.x implicit-GEMM conv2d fprop kernel, used by the sweep
// collector (predictor/emit.py generates one translation unit per kernel instance that includes
// this header).  Timing happens here, between CUDA events around back-to-back launches, so the
// Python side pays one call per (config, shape) and not one per launch.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/conv/conv2d_problem_size.h"
#include "cutlass/conv/convolution.h"
#include "cutlass/conv/device/implicit_gemm_convolution.h"
#include "cutlass/conv/kernel/default_conv2d_fprop.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/epilogue/thread/linear_combination_clamp.h"

extern "C" {
// Problem in NHWC terms (the interleaved layouts use the same logical extents).
struct PkProblem {
  int64_t n, h, w, c, k, r, s, p, q;
  int64_t pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
  int64_t split_k_slices;
};

enum PkStatus {
  PK_OK = 0,
  PK_CANNOT_IMPLEMENT = 1,
  PK_WORKSPACE_TOO_SMALL = 2,
  PK_INIT_ERROR = 3,
  PK_LAUNCH_ERROR = 4,
};
}

namespace pk {

// `reps` batches back to back on `stream`, each enqueued by `batch()` (its PkStatus), one event between
// batches and one synchronisation at the end; times_ms[r] = batch r.  The timed modes 2 and 3 of launch().
template <typename Batch>
int timed_batches(cudaStream_t stream, int reps, float* times_ms, Batch batch) {
  constexpr int kMaxReps = 64;
  if (reps < 1 || reps > kMaxReps) return PK_LAUNCH_ERROR;
  cudaEvent_t ev[kMaxReps + 1];
  int made = 0;
  int status = PK_OK;
  for (; made <= reps; ++made) {
    if (cudaEventCreate(&ev[made]) != cudaSuccess) { status = PK_LAUNCH_ERROR; break; }
  }
  if (status == PK_OK) {
    cudaEventRecord(ev[0], stream);
    for (int r = 0; r < reps && status == PK_OK; ++r) {
      status = batch();
      cudaEventRecord(ev[r + 1], stream);
    }
    if (cudaEventSynchronize(ev[reps]) != cudaSuccess || cudaGetLastError() != cudaSuccess) status = PK_LAUNCH_ERROR;
    for (int r = 0; r < reps && status == PK_OK; ++r) {
      float ms = 0.f;
      cudaEventElapsedTime(&ms, ev[r], ev[r + 1]);
      times_ms[r] = ms;
    }
  }
  for (int i = 0; i < made; ++i) cudaEventDestroy(ev[i]);
  return status;
}

// mode 3: as mode 2, but each batch is one replay of a CUDA graph of `iters` launches (captured
// once per call, on `stream` unless it is the legacy default stream, which cannot capture): what a
// graph-captured network pays per kernel, without the launch path of back-to-back stream launches.
template <typename Op>
int graph_batches(Op& op, cudaStream_t stream, int iters, int reps, float* times_ms) {
  if (iters < 1) return PK_LAUNCH_ERROR;
  cudaStream_t cs = stream;
  if (stream == nullptr && cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) != cudaSuccess) return PK_LAUNCH_ERROR;
  int status = PK_OK;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed) != cudaSuccess) status = PK_LAUNCH_ERROR;
  if (status == PK_OK) {
    for (int i = 0; i < iters; ++i) {
      if (op.run(cs) != cutlass::Status::kSuccess) { status = PK_LAUNCH_ERROR; break; }
    }
    // end the capture whatever happened (a failed capture leaves the stream unusable otherwise)
    if (cudaStreamEndCapture(cs, &graph) != cudaSuccess || graph == nullptr) status = PK_LAUNCH_ERROR;
  }
  if (status == PK_OK && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) status = PK_LAUNCH_ERROR;
  if (status == PK_OK && cudaGraphUpload(exec, stream) != cudaSuccess) status = PK_LAUNCH_ERROR;
  if (status == PK_OK) {
    status = timed_batches(stream, reps, times_ms,
                           [&] { return cudaGraphLaunch(exec, stream) == cudaSuccess ? PK_OK : PK_LAUNCH_ERROR; });
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  if (cs != stream) cudaStreamDestroy(cs);
  cudaGetLastError();  // a failed capture's error was reported as PK_LAUNCH_ERROR; do not leave it behind
  return status;
}

// mode 1: one launch (timed into times_ms[0] if times_ms is given: sizes the batches);
// mode 2: `reps` batches of `iters` back-to-back launches (timed_batches()); mode 3: graph_batches().
// Shared by the CUTLASS 2.x and 3.x runners.
template <typename Op>
int launch(Op& op, cudaStream_t stream, int mode, int iters, int reps, float* times_ms) {
  if (mode == 3) return graph_batches(op, stream, iters, reps, times_ms);
  if (mode == 1) {
    // one launch; if times_ms is given it also receives that launch's time (sizes the batches)
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    if (times_ms && (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)) return PK_LAUNCH_ERROR;
    if (times_ms) cudaEventRecord(e0, stream);
    int st = op.run(stream) == cutlass::Status::kSuccess ? PK_OK : PK_LAUNCH_ERROR;
    if (cudaGetLastError() != cudaSuccess) st = PK_LAUNCH_ERROR;
    if (times_ms) {
      cudaEventRecord(e1, stream);
      if (cudaEventSynchronize(e1) != cudaSuccess) st = PK_LAUNCH_ERROR;
      float ms = 0.f;
      cudaEventElapsedTime(&ms, e0, e1);
      times_ms[0] = ms;
      cudaEventDestroy(e0);
      cudaEventDestroy(e1);
    }
    return st;
  }
  return timed_batches(stream, reps, times_ms, [&] {
    for (int i = 0; i < iters; ++i) {
      if (op.run(stream) != cutlass::Status::kSuccess) return int(PK_LAUNCH_ERROR);
    }
    return int(PK_OK);
  });
}

template <typename Kernel>
struct Runner {
  using Op = cutlass::conv::device::ImplicitGemmConvolution<Kernel>;
  using ElementA = typename Op::ElementA;
  using ElementB = typename Op::ElementB;
  using ElementC = typename Op::ElementC;
  using LayoutA = typename Op::LayoutA;
  using LayoutB = typename Op::LayoutB;
  using LayoutC = typename Op::LayoutC;
  using ElementCompute = typename Op::ElementCompute;

  static int64_t info(int what) {
    switch (what) {
      case 0: return static_cast<int64_t>(sizeof(typename Kernel::SharedStorage));
      case 1: return static_cast<int64_t>(Kernel::kThreadCount);
      default: return -1;
    }
  }

  // mode 0: query workspace size (returned in *ws_needed) and can_implement only.
  // mode 1 / 2 / 3: see launch().
  static int run(const PkProblem* pr, void* A, void* B, void* C, void* D, float alpha, float beta,
                 void* workspace, size_t workspace_bytes, void* stream_ptr, int mode, int iters,
                 int reps, float* times_ms, size_t* ws_needed) {
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    cutlass::conv::Conv2dProblemSize problem(
        int(pr->n), int(pr->h), int(pr->w), int(pr->c), int(pr->k), int(pr->r), int(pr->s),
        int(pr->p), int(pr->q), int(pr->pad_h), int(pr->pad_w), int(pr->stride_h),
        int(pr->stride_w), int(pr->dil_h), int(pr->dil_w),
        cutlass::conv::Mode::kCrossCorrelation, int(pr->split_k_slices));
    auto const kOp = cutlass::conv::Operator::kFprop;
    LayoutA la = LayoutA::packed(cutlass::conv::implicit_gemm_tensor_a_extent(kOp, problem));
    LayoutB lb = LayoutB::packed(cutlass::conv::implicit_gemm_tensor_b_extent(kOp, problem));
    LayoutC lc = LayoutC::packed(cutlass::conv::implicit_gemm_tensor_c_extent(kOp, problem));
    cutlass::TensorRef<ElementA, LayoutA> ref_a(static_cast<ElementA*>(A), la);
    cutlass::TensorRef<ElementB, LayoutB> ref_b(static_cast<ElementB*>(B), lb);
    cutlass::TensorRef<ElementC, LayoutC> ref_c(static_cast<ElementC*>(C), lc);
    cutlass::TensorRef<ElementC, LayoutC> ref_d(static_cast<ElementC*>(D), lc);
    typename Op::Arguments args(
        problem, ref_a, ref_b, ref_c, ref_d,
        {ElementCompute(alpha), ElementCompute(beta)},
        pr->split_k_slices > 1 ? cutlass::conv::SplitKMode::kSerial : cutlass::conv::SplitKMode::kNone);
    Op op;
    size_t need = op.get_workspace_size(args);
    if (ws_needed) *ws_needed = need;
    if (op.can_implement(args) != cutlass::Status::kSuccess) return PK_CANNOT_IMPLEMENT;
    if (mode == 0) return PK_OK;
    if (need > workspace_bytes) return PK_WORKSPACE_TOO_SMALL;
    if (op.initialize(args, workspace, stream) != cutlass::Status::kSuccess) return PK_INIT_ERROR;
    if (cudaGetLastError() != cudaSuccess) return PK_INIT_ERROR;
    return launch(op, stream, mode, iters, reps, times_ms);
  }
};

}  // namespace pk

#define PK_EXPORT_KERNEL(NAME, KERNEL)                                                           \
  extern "C" int64_t pk_info_##NAME(int what) { return pk::Runner<KERNEL>::info(what); }         \
  extern "C" int pk_run_##NAME(const PkProblem* pr, void* A, void* B, void* C, void* D,           \
                               float alpha, float beta, void* ws, size_t ws_bytes, void* stream, \
                               int mode, int iters, int reps, float* times_ms,                   \
                               size_t* ws_needed) {                                              \
    return pk::Runner<KERNEL>::run(pr, A, B, C, D, alpha, beta, ws, ws_bytes, stream, mode,      \
                                   iters, reps, times_ms, ws_needed);                            \
  }
