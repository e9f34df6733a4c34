"""The text of a generated dispatcher (:mod:`predictor.dispatcher`): its C++ pieces (part macros,
the problem struct, first-call tuning, one C ABI per family) and its CMake project.  Pure string
building: nothing here reads models or runs a compiler."""
from __future__ import annotations

from typing import Sequence

from .codegen import ResultCode
from .config import KernelConfig
from .emit import CUDA_OPTIONS, CUTLASS_INCLUDE_DIRS, CXX_STANDARD
from .features import ARGS, cpp_output_extents

#: Targets of a dispatcher of the default families (its CMake project builds for all of them).
DISPATCH_ARCHS: tuple[str, ...] = ("sm_90", "sm_87")


FAMILY_CODE = """
// ---------------------------------------------------------------- family {f}
static PkdRunFn const kRun_{f}[] = {{
{runs}
}};
static_assert(sizeof(kRun_{f}) / sizeof(kRun_{f}[0]) == NS::kNumConfigs_{f}, "table mismatch");

extern "C" int pkd_select_{f}(const int64_t* s, int64_t sms) {{
  return NS::select_{f}(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], sms);
}}

extern "C" const char* pkd_name_{f}(int i) {{ return NS::name_{f}(i); }}

extern "C" int pkd_num_configs_{f}() {{ return NS::kNumConfigs_{f}; }}

extern "C" size_t pkd_workspace_bytes_{f}(const int64_t* s, int64_t sms) {{
  size_t most = 0;
  for (int i = 0; i < NS::kNumConfigs_{f}; ++i) {{
    PkProblem p = pkd_problem(s, NS::kConfigs_{f}[i].split_k_slices);
    size_t need = 0;
    if (kRun_{f}[i](&p, nullptr, nullptr, nullptr, nullptr, 1.f, 0.f, nullptr, 0, nullptr, 0, 0, 0,
                    nullptr, &need) == PK_OK && need > most) most = need;
  }}
  (void)sms;
  return most;
}}

{member_tables}extern "C" int pkd_conv2d_{f}(const int64_t* s, int64_t sms, void* x, void* w, void* y, float alpha,
                               float beta, void* workspace, size_t workspace_bytes, void* stream,
                               int* chosen) {{
  // the pick, then (a kernel that cannot implement the problem) the rest of its leaf's candidates,
  // {member_comment}then every other config in table order
  int cand[NS::kMaxCandidates{member_slots}];
  int n = NS::candidates_{f}(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], cand, sms);
  if (chosen) *chosen = n < 0 ? n : cand[0];
  if (n < 0) return n;
{member_init}  for (int attempt = 0; attempt < n + NS::kNumConfigs_{f}; ++attempt) {{
{member_picks}    int i = attempt < n ? cand[attempt] : attempt - n;
    bool again = false;
    for (int j = 0; attempt >= n && j < n; ++j) again = again || cand[j] == i;
    if (again) continue;
    PkProblem p = pkd_problem(s, NS::kConfigs_{f}[i].split_k_slices);
    int st = kRun_{f}[i](&p, x, w, y, y, alpha, beta, workspace, workspace_bytes, stream, 1, 1, 1,
                         nullptr, nullptr);
    if (st == PK_CANNOT_IMPLEMENT) continue;
    if (chosen) *chosen = i;
    return st;
  }}
  return {no_kernel};
}}

extern "C" int pkd_candidates_{f}(const int64_t* s, int64_t sms, int* out) {{
  return NS::candidates_{f}(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], out, sms);
}}

static PkdTuneCache kTune_{f};

extern "C" int pkd_tuned_pick_{f}(const int64_t* s, int64_t sms) {{ return kTune_{f}.find(s, sms); }}

extern "C" void pkd_tune_clear_{f}() {{ kTune_{f}.clear(); }}

extern "C" int pkd_conv2d_tuned_{f}(const int64_t* s, int64_t sms, void* x, void* w, void* y, float alpha,
                                     float beta, void* workspace, size_t workspace_bytes, void* stream,
                                     int* chosen) {{
  int cand[NS::kMaxCandidates];
  int n = pkd_candidates_{f}(s, sms, cand);
  if (n < 0) {{
    if (chosen) *chosen = n;
    return n;
  }}
  int best = kTune_{f}.find(s, sms);
  if (best < 0 && n > 1 && !pkd_capturing(stream)) {{
    int64_t p = {p_expr}, q = {q_expr};
    size_t out_bytes = size_t(s[0]) * size_t(p) * size_t(q) * size_t(s[4]) * {out_bytes};
    int k[NS::kMaxCandidates];
    for (int j = 0; j < n; ++j) k[j] = int(NS::kConfigs_{f}[cand[j]].split_k_slices);
    best = pkd_tune(kRun_{f}, cand, k, n, s, x, w, y, out_bytes, alpha, beta, workspace, workspace_bytes, stream);
    if (best >= 0) best = kTune_{f}.insert(s, sms, best);
  }}
  if (best >= 0) {{
    PkProblem pr = pkd_problem(s, NS::kConfigs_{f}[best].split_k_slices);
    int st = kRun_{f}[best](&pr, x, w, y, y, alpha, beta, workspace, workspace_bytes, stream, 1, 1, 1,
                            nullptr, nullptr);
    if (st != PK_CANNOT_IMPLEMENT) {{
      if (chosen) *chosen = best;
      return st;
    }}
  }}
  return pkd_conv2d_{f}(s, sms, x, w, y, alpha, beta, workspace, workspace_bytes, stream, chosen);
}}
"""


#: Parameters of every kernel's ``pk_run_<name>`` (``csrc/pk_runtime*.h``).
RUN_PARAMS = ("const PkProblem*, void*, void*, void*, void*, float, float, void*, size_t, void*, "
               "int, int, int, float*, size_t*")

CLASSES_LINE = "#define PKD_CLASSES "


def parts_text(classes: int) -> str:
    """The part macros of a dispatcher source whose kernels fall into ``classes`` translation-unit
    classes (:func:`predictor.emit.translation_unit_classes`)."""
    one_tu = ('#error "this dispatcher\'s kernels cannot share one translation unit: build it in at least '
              'PKD_CLASSES parts (python -m predictor.dispatcher build, or its CMakeLists.txt)"'
              if classes > 1 else
              "#define PKD_CLASS(c) 1\n#define PKD_KERNEL_PART(c, t) 1\n#define PKD_DISPATCH_PART 1")
    return f"""\
// One translation unit, or PKD_PARTS of them compiled in parallel (predictor.dispatcher build --jobs,
// CMake -DPKD_PARTS): the kernels fall into PKD_CLASSES classes whose members may share a translation
// unit; with -DPKD_PARTS=n -DPKD_PART=i, part i holds kernel t of class i % PKD_CLASSES when t modulo
// that class's number of parts is i / PKD_CLASSES, and part 0 also holds the dispatch code.
{CLASSES_LINE}{classes}
#ifdef PKD_PARTS
#if PKD_PARTS < PKD_CLASSES
#error "PKD_PARTS must be at least PKD_CLASSES"
#endif
#define PKD_CLASS(c) (PKD_PART % PKD_CLASSES == (c))
#define PKD_KERNEL_PART(c, t) \\
  (PKD_CLASS(c) && (t) % ((PKD_PARTS - (c) + PKD_CLASSES - 1) / PKD_CLASSES) == PKD_PART / PKD_CLASSES)
#define PKD_DISPATCH_PART (PKD_PART == 0)
#else
{one_tu}
#endif"""


#: Where a choice's pick cannot run a problem (after its leaf's candidates): the pick of each member family's own
#: model, through a table from the member's config index to the choice's (-1: a config the choice does not hold).
MEMBER_TABLE = """\
// member {m}'s config index -> its index in {f}'s table (-1: not held there)
static const int kMemberPick_{f}_{m}[] = {{{mapping}}};
static_assert(sizeof(kMemberPick_{f}_{m}) / sizeof(int) == NS::kNumConfigs_{m}, "member table mismatch");

"""
#: Appends member ``m``'s own pick to ``cand`` (unless the choice does not hold it or it is there already).
MEMBER_PICK = """\
      {{  // member {m}'s own pick
        int j = NS::select_{m}(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], sms);
        int i = j >= 0 ? kMemberPick_{f}_{m}[j] : -1;
        bool again = i < 0;
        for (int k = 0; k < n; ++k) again = again || cand[k] == i;
        if (!again) cand[n++] = i;
      }}
"""


def family_code(fam: str, cfgs: Sequence[KernelConfig], members: Sequence[tuple[str, Sequence[int]]] = ()) -> str:
    """The C ABI of one family: its portfolio's run functions in table order, select and launch.  ``members``
    (a choice): each member family with its own model in the header (its identifier) and, per config of that
    model, its index in ``cfgs`` or -1: where the pick and its leaf's candidates cannot run a problem, the members'
    own picks are tried next, in this order, before the rest of the table (:data:`MEMBER_TABLE`)."""
    runs = "\n".join(f"    &pk_run_{c.kernel_name},  // {i}: {c.name}" for i, c in enumerate(cfgs))
    for m, mapping in members:
        bad = [j for j in mapping if not -1 <= j < len(cfgs)]
        if bad:
            raise ValueError(f"{fam}: member {m}'s table maps to {bad[:3]}, outside the {len(cfgs)} configs")
    member_text = {
        "member_tables": "".join(MEMBER_TABLE.format(f=fam, m=m, mapping=", ".join(map(str, mapping)))
                                 for m, mapping in members),
        "member_comment": (f"then the own picks of its members {', '.join(m for m, _ in members)} "
                           "(where this model holds them),\n  // " if members else ""),
        "member_slots": f" + {len(members)}" if members else "",
        "member_init": ("  const int leaf = n;  // the members' picks are asked for only once the leaf's fail\n"
                        if members else ""),
        "member_picks": ("    if (attempt == leaf) {\n" + "".join(MEMBER_PICK.format(f=fam, m=m) for m, _ in members)
                         + "    }\n") if members else "",
    }
    extent = cpp_output_extents({a: f"s[{i}]" for i, a in enumerate(ARGS) if a != "sms"})
    sizes = {ELEMENT_BYTES[c.family.spec.element_c] for c in cfgs}
    if len(sizes) != 1:
        raise ValueError(f"{fam}: configs write outputs of different element sizes {sorted(sizes)}")
    return FAMILY_CODE.format(f=fam, runs=runs, no_kernel=int(ResultCode.NO_KERNEL), p_expr=extent["P"],
                               q_expr=extent["Q"], out_bytes=f"{sizes.pop()}", **member_text)


#: Bytes of an output element (``FamilySpec.element_c``): the scratch output of first-call tuning.
ELEMENT_BYTES = {"s8": 1, "f16": 2, "bf16": 2, "f32": 4, "s32": 4}


# ----------------------------------------------------------------- the problem struct (shape -> PkProblem)
#: The first-call tuning shared by every ``pkd_conv2d_tuned_<f>`` (after :func:`problem_code`).
TUNE_CODE = """
// ---------------------------------------------------------------- first-call tuning (pkd_conv2d_tuned_*)
// Winners by (shape, sms); the first insert of a key wins, so every thread then runs the same kernel.
struct PkdTuneCache {
  std::mutex mu;
  std::map<std::array<int64_t, 11>, int> best;
  static std::array<int64_t, 11> key(const int64_t* s, int64_t sms) {
    std::array<int64_t, 11> k;
    for (int i = 0; i < 10; ++i) k[size_t(i)] = s[i];
    k[10] = sms;
    return k;
  }
  int find(const int64_t* s, int64_t sms) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = best.find(key(s, sms));
    return it == best.end() ? -1 : it->second;
  }
  int insert(const int64_t* s, int64_t sms, int index) {
    std::lock_guard<std::mutex> lock(mu);
    return best.emplace(key(s, sms), index).first->second;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu);
    best.clear();
  }
};

// True while the stream is capturing a CUDA graph (or its state cannot be read): never tune then.
static bool pkd_capturing(void* stream) {
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &cs) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return cs != cudaStreamCaptureStatusNone;
}

// Times the candidates the way the collector does (timing method 3, predictor.timing), at a first call's
// budget, into a scratch copy of y (y itself is never written here: beta != 0 stays correct): each
// candidate runs once untimed, then one replay of a graph of kPkdTuneSizingIters launches sizes its
// batches (kPkdTuneBatchMs long), then kPkdTuneRounds rounds, interleaved over the candidates (clock drift
// hits them alike), each a CUDA-graph replay of a batch's launches after a dropped warm-up replay (what the
// collector's rows are); a candidate's time is its median round.  Graph replays, not back-to-back stream
// launches: on kernels of a few microseconds the host launch path adds 1-2 µs that differs between kernel
// generations and configs (sweeps/runs/s11/eager-vs-graph.md), so eager batches ranked the candidates by
// it; a graph-captured network pays the graph time.  Returns the fastest candidate's index, or -1 when none
// ran (no scratch memory, or no candidate can implement the problem).  Synchronises the stream (events) and
// the device (cudaMalloc / cudaFree of the scratch, graph instantiation).
// A single timed launch per candidate (the first version) is too coarse for kernels of a few
// microseconds: on the H200 it kept a slower config than the static pick on average.
static constexpr float kPkdTuneBatchMs = 0.05f;
static constexpr int kPkdTuneRounds = 3;
static constexpr int kPkdTuneMaxIters = 1000;
static constexpr int kPkdTuneSizingIters = 4;

static int pkd_tune(PkdRunFn const* run, const int* cand, const int* split_k, int n, const int64_t* s, void* x,
                    void* w, void* y, size_t out_bytes, float alpha, float beta, void* workspace,
                    size_t workspace_bytes, void* stream) {
  constexpr int kMax = 16;
  if (n > kMax) n = kMax;
  void* scratch = nullptr;
  if (cudaMalloc(&scratch, out_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  cudaMemcpyAsync(scratch, y, out_bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream));
  int iters[kMax];
  float t[kMax][kPkdTuneRounds];
  bool ok[kMax];
  for (int j = 0; j < n; ++j) {  // warm up, then size the batches from one short graph replay
    PkProblem p = pkd_problem(s, split_k[j]);
    float ms = 0.f;
    ok[j] = run[cand[j]](&p, x, w, scratch, scratch, alpha, beta, workspace, workspace_bytes, stream, 1, 1, 1,
                         nullptr, nullptr) == PK_OK &&
            run[cand[j]](&p, x, w, scratch, scratch, alpha, beta, workspace, workspace_bytes, stream, 3,
                         kPkdTuneSizingIters, 1, &ms, nullptr) == PK_OK;
    if (!ok[j]) (void)cudaGetLastError();
    ms /= float(kPkdTuneSizingIters);
    int it = ms > 0.f ? int(kPkdTuneBatchMs / ms) + 1 : kPkdTuneMaxIters;
    iters[j] = it < 1 ? 1 : (it > kPkdTuneMaxIters ? kPkdTuneMaxIters : it);
  }
  for (int r = 0; r < kPkdTuneRounds; ++r) {
    for (int j = 0; j < n; ++j) {
      if (!ok[j]) continue;
      PkProblem p = pkd_problem(s, split_k[j]);
      float ms[2] = {0.f, 0.f};  // a warm-up replay (dropped), then the timed one
      if (run[cand[j]](&p, x, w, scratch, scratch, alpha, beta, workspace, workspace_bytes, stream, 3, iters[j], 2,
                       ms, nullptr) != PK_OK) {
        (void)cudaGetLastError();
        ok[j] = false;
        continue;
      }
      t[j][r] = ms[1] / float(iters[j]);
    }
  }
  int best = -1;
  float best_ms = 0.f;
  for (int j = 0; j < n; ++j) {
    if (!ok[j]) continue;
    float v[kPkdTuneRounds];
    for (int r = 0; r < kPkdTuneRounds; ++r) v[r] = t[j][r];
    std::sort(v, v + kPkdTuneRounds);
    float med = v[kPkdTuneRounds / 2];
    if (best < 0 || med < best_ms) {
      best = cand[j];
      best_ms = med;
    }
  }
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  cudaFree(scratch);
  (void)cudaGetLastError();
  return best;
}
"""


def problem_code() -> str:
    """C++ of ``pkd_problem``: the ``PkProblem`` of a shape array (N, C, H, W, K, R, S, stride, pad,
    dilation), with the output size P, Q from the feature table."""
    # s = the shape arguments, sms apart
    extent = cpp_output_extents({a: f"s[{i}]" for i, a in enumerate(ARGS) if a != "sms"})
    return f"""
static PkProblem pkd_problem(const int64_t* s, int64_t split_k) {{
  // s = N, C, H, W, K, R, S, stride, pad, dilation (already validated by select_*)
  PkProblem p;
  p.n = s[0]; p.c = s[1]; p.h = s[2]; p.w = s[3]; p.k = s[4]; p.r = s[5]; p.s = s[6];
  p.p = {extent["P"]};
  p.q = {extent["Q"]};
  p.pad_h = p.pad_w = s[8]; p.stride_h = p.stride_w = s[7]; p.dil_h = p.dil_w = s[9];
  p.split_k_slices = split_k;
  return p;
}}
"""


REQUIRES_LINE = "// pk-requires-arch: "


def requires_text(needs: list[str]) -> str:
    if not needs:
        return ""
    return (f"// This dispatcher holds CUTLASS 3.x kernels (TMA + wgmma) that run only on {needs[0]}: build it\n"
            f"// for {needs[0]} only (python -m predictor.dispatcher build <this file> --arch {needs[0]}).\n"
            f"{REQUIRES_LINE}{needs[0]}\n")


CMAKE_TEXT = """\
# generated by predictor.dispatcher, do not edit
# Builds the {slug} conv2d dispatcher (a shared library with a C ABI) for {targets}:
#   CUTLASS_DIR=$(python -c 'import cutlass_library, pathlib; print(pathlib.Path(cutlass_library.__file__).parent / "source")')
#   cmake -S export/dispatch -B build/dispatch -DCUTLASS_DIR=$CUTLASS_DIR && cmake --build build/dispatch -j
cmake_minimum_required(VERSION 3.18)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)  # must precede project(), which would default it
  set(CMAKE_CUDA_ARCHITECTURES {cuda_archs})
endif()
project({slug}_conv_dispatch LANGUAGES CXX CUDA)
set(CUTLASS_DIR "" CACHE PATH "CUTLASS source root (the nvidia-cutlass wheel's cutlass_library/source)")
if(NOT CUTLASS_DIR)
  message(FATAL_ERROR "set -DCUTLASS_DIR=<cutlass_library/source>")
endif()
set(CMAKE_CUDA_STANDARD {std})
set(CMAKE_CXX_STANDARD {std})
# the source compiles as PKD_PARTS translation units (at least {parts}: kernels that cannot share one),
# in parallel with cmake --build -j; raise it to spread a large dispatcher over more cores
set(PKD_PARTS {parts} CACHE STRING "translation units the dispatcher is compiled as (at least {parts})")
if(PKD_PARTS LESS {parts})
  message(FATAL_ERROR "PKD_PARTS=${{PKD_PARTS}}: this dispatcher needs at least {parts}")
endif()
math(EXPR PKD_LAST_PART "${{PKD_PARTS}} - 1")
set(PKD_OBJECTS "")
foreach(PART RANGE ${{PKD_LAST_PART}})
  add_library({slug}_dispatch_part${{PART}} OBJECT {slug}_dispatch.cu)
  set_target_properties({slug}_dispatch_part${{PART}} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_definitions({slug}_dispatch_part${{PART}} PRIVATE PKD_PARTS=${{PKD_PARTS}} PKD_PART=${{PART}})
  target_include_directories({slug}_dispatch_part${{PART}} PRIVATE ${{CMAKE_CURRENT_SOURCE_DIR}}
    {cutlass_includes})
  target_compile_options({slug}_dispatch_part${{PART}} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:{cuda_options}>)
  list(APPEND PKD_OBJECTS $<TARGET_OBJECTS:{slug}_dispatch_part${{PART}}>)
endforeach()
add_library({slug}_conv_dispatch SHARED ${{PKD_OBJECTS}})
set_target_properties({slug}_conv_dispatch PROPERTIES LINKER_LANGUAGE CUDA)
"""


def cmake_text(slug: str, needs: Sequence[str], parts: int = 1) -> str:
    """The dispatcher's CMake project: for :data:`DISPATCH_ARCHS`, or only for the
    architecture-specific target its kernels need, compiled as ``PKD_PARTS`` translation units
    (at least ``parts``); compile options and CUTLASS include folders from :mod:`predictor.emit`."""
    if needs:  # only that architecture can run (or even correctly compile) these kernels
        targets = f"{needs[0]} only (its kernels need {needs[0]})"
        archs = [needs[0]]
    else:
        targets = " and ".join(DISPATCH_ARCHS)
        archs = list(DISPATCH_ARCHS)
    cuda_archs = " ".join(sorted(a.removeprefix("sm_") for a in archs))
    includes = " ".join(f"${{CUTLASS_DIR}}/{d}" for d in CUTLASS_INCLUDE_DIRS)
    return CMAKE_TEXT.format(slug=slug, targets=targets, cuda_archs=cuda_archs, std=CXX_STANDARD,
                         cutlass_includes=includes, cuda_options=" ".join(CUDA_OPTIONS), parts=parts)
